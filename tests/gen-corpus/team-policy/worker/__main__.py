print("working")
