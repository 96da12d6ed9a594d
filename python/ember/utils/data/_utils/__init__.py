"""torch.utils.data._utils: the default collate and convert functions."""
