"""Each paper's claim, reproduced at equal compute: one comparison per paper, one table a user
can rerun (benchmarks/reproduction/cli.py says how; `--help` prints it).

    python benchmarks/reproduce.py onealigner --dry-run   # the plan: runs, steps, pairs seen, cost
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script, only benchmarks/ is on the path
    sys.path.insert(0, str(ROOT))

from benchmarks.reproduction.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
