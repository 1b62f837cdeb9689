"""What there is to do and what is done: input expansion, page sources and the job store."""
