"""Reports: console (rich), JSON, Markdown, HTML and plots. Sees only ``modelcost.core`` types."""
