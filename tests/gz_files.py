"""Writing the gzipped text files the corpus readers take (the general corpus's TSVs), for tests
that build a toy corpus."""
import gzip


def write_gz(path, lines) -> None:
    """`lines` (each ending in a newline) into the gzipped text file `path`, its folders made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.writelines(lines)
