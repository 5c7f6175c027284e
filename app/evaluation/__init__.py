"""Pure numeric core: parsing, records, measures, pooling and analyses (numpy/scipy only)."""
