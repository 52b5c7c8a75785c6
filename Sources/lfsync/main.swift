import LocalFirstSync
print("lfsync")
