version = '2.5.5'
