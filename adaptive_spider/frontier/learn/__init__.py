"""What TRES learns with: the regression tree over link features and the Q-network."""
