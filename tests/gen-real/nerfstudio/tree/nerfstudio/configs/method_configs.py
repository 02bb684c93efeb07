import tyro

AnnotatedBaseConfigUnion = None
