"""The training lab: a tiny Transformer encoder trained with each normalization, in torch.

One idea per module, plain math in the style of nanoGPT:
- `data`: the synthetic task, variable-length sentences padded into batches, with a mask;
- `norms`: Layer Norm, RMSNorm, naive and masked Batch Norm, Dynamic Tanh, none;
- `model`: the encoder, each variant a norm and where it sits (post or pre);
- `train`: one variant trained with fixed seeds, its gradients at initialisation;
- `config`: the lab's checked settings and caps;
- `run`: every chosen variant on the same data and seed, as one plain result;
- `worker`: runs in a separate process, one at a time, cached per configuration;
- `script`: the runnable PyTorch script that reproduces a run.
"""
