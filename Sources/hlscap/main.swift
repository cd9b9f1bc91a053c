print("hlscap")
