"""Records and what is computed from them: run files, the results store, metrics and statistics,
baselines files, usage, publishing, progress and summaries."""
