"""Study helpers the notebooks call: grids, tables, labels (one module per paper)."""
