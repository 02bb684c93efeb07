batch_size = 1
