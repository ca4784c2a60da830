"""The frontier: every queued URL with its link features, the strategies that order it,
domain profiles, and the JOBDIR journal that makes it survive a kill."""
