"""Layer I: the index derived from commit trailers, replayed, cached and rendered."""
