"""Static SVG charts: scales and number formats, text layout, marks, and the charts themselves (`svg`)."""
