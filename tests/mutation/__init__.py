"""Mutation suites: the symbolic layer (tests.mutation.symbolic) and the numeric core (tests.mutation.numeric)."""
