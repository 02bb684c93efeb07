import greeting
print(greeting.hello())
