"""Names and modules: where a file sits among modules, what its names are bound to, and the
project index that reads other modules."""
