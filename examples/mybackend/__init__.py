"""A small, realistic backend package: lowering passes and a quantizer helper."""
