"""Problems and suites: problem files, sizes and shrinking, the manifest, selection, upstream importers, seeds."""
