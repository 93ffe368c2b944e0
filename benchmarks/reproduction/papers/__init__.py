"""The papers whose claims are reproduced, one module each: its runs, evaluations and claims."""

from .dueam import dueam
from .laser import laser
from .meaning import meaning
from .muse import muse
from .onealigner import onealigner

COMPARISONS = {"onealigner": onealigner, "dueam": dueam, "muse": muse, "laser": laser, "meaning": meaning}
