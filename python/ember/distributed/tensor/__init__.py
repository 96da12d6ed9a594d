"""torch.distributed.tensor in ember: only its parallel package (parallelize_module)."""
