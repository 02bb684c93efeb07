out_dir = 'out-shakespeare-char'
dataset = 'shakespeare_char'
