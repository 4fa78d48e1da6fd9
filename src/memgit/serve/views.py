def home_page(root, names):
    return 200, "home " + " ".join(names)

def drive_page(root, name, folder, rest, query):
    return 200, "drive " + name
