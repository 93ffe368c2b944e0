"""Benchmarks behind `xlingua bench ...` and `xlingua laser sweep`: they measure the library
(speed, FLOPs against the CPU's peak, mining quality, student sizes) and only the command line
imports them."""
