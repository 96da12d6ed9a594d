"""torch.distributed.checkpoint in ember: only state_dict's full (gathered) state."""
