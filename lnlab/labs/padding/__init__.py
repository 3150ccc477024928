"""The padding lab: Batch Norm against Layer Norm on a padded batch of sentences."""
