"""Git operations on the memory repo: refs, the working tree that follows, the publish loop, merges, history, remotes."""
