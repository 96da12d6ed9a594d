"""torch.onnx's name, so that programs that import it (to offer an export flag) run;
ember has no ONNX exporter, and export says so."""

__all__ = ["export"]


def export(model, args, f, *unused_args, **unused_kwargs):
    raise NotImplementedError("ember.onnx.export: ember does not export ONNX graphs; save the weights with "
                              "ember.save(model.state_dict(), path) and load them into PyTorch to export")
