"""Models: specs, conversion, the on-disk cache and the engines holding loaded ncnn nets."""
