"""Report: what every stage says, and how it is printed.

Takes nothing from the other stages. Gives the `Diagnostic` value (a frozen,
located, sortable problem), the catalogue of codes with their default
severities and docs, "did you mean" hints, and the reporters that print a
diagnostic stream as text, JSON, GitHub annotations or SARIF.
"""
