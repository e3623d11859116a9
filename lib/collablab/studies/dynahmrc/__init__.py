"""DynaHMRC (dynahmrc.tex): decentralized heterogeneous robot teams under dynamic change, on the
shared household world with a geometric robot layer (work in progress; see the modules)."""

__all__: list[str] = []
