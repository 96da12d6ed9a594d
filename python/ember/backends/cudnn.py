"""torch.backends.cudnn: allow_tf32 is here so that scripts that set it run. ember's
convolutions do not go through cuDNN, so it changes nothing; the setting that decides
TF32 for ember's f32 products is ember.backends.cuda.matmul.allow_tf32."""

allow_tf32 = True  # PyTorch's default
