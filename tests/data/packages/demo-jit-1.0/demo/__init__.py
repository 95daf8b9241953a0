"""A package for the audit tests: quantize() reaches subprocess four calls down."""
