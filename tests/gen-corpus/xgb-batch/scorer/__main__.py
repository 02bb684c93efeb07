print("scoring")
