"""Which held-out sentences a model with new tokenizer pieces splits differently from the model it
extends: per dev language (the general corpus's dev slices), the share of sentences whose pieces
change, and the new pieces that change them. A rows-only extension (`xlingua extend --rows-only`)
embeds every sentence it does not re-split exactly as before, so on the languages the model
already reads this share tells, before any evaluation set is read, how much text the candidate
can move.

    python benchmarks/split_changes.py xlingua-small-v2 runs/extend/rows-arab/best --script Arabic

Prints a markdown table (languages with no sentence in the scripts are left out) with the new
pieces each language uses most; its last row is the English side of every dev pair.
"""
import argparse


def main(argv=None) -> int:
    from xlingua.data.general import dev_langs, read_general
    from xlingua.data.scripts import any_char_of
    from xlingua.encoders.loading import load_encoder
    from xlingua.encoders.new_pieces import resplit

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old", help="the model extended (an encoder spec)")
    ap.add_argument("new", help="the model with the new pieces (an encoder spec)")
    ap.add_argument("--script", action="append", default=[],
                    help="only sentences holding a character of this Unicode script (repeatable)")
    ap.add_argument("--top", type=int, default=3, help="how many of each language's pieces used most to print")
    args = ap.parse_args(argv)
    old, new = load_encoder(args.old).tokenizer, load_encoder(args.new).tokenizer
    has = any_char_of(args.script) if args.script else None
    print(f"| language | dev sentences{' in ' + ', '.join(args.script) if args.script else ''} "
          "| split differently | share | new pieces used most |")
    print("|---|---:|---:|---:|---|")
    english: set[str] = set()
    rows = []
    for lang in sorted(dev_langs()):
        pairs = read_general([lang], split="dev")
        english.update(p.english for p in pairs)
        rows.append((lang, [p.text for p in pairs]))
    # the English side too: Latin-script pieces could reach it, and every pair embeds it
    rows.append(("en (the dev pairs' English side)", sorted(english)))
    for lang, texts in rows:
        texts = [t for t in texts if has is None or has.search(t)]
        if not texts:
            continue
        changed, used = resplit(old, new, texts)
        most = ", ".join(f"{p} ({n})" for p, n in used.most_common(args.top))
        print(f"| {lang} | {len(texts)} | {len(changed)} | {100 * len(changed) / len(texts):.1f}% | {most} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
