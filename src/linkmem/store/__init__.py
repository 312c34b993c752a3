"""Storage backends behind one contract (``base.Store``) and the registry that opens them."""
