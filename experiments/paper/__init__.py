"""Commands that regenerate the papers' figures and tables."""
