"""DynaHMRC (dynahmrc.tex): decentralized heterogeneous robot teams under dynamic change, on the
shared household world with a geometric robot layer (work in progress; see the modules)."""

from . import actions, brain, layout, robots, world

__all__ = ["actions", "brain", "layout", "robots", "world"]
