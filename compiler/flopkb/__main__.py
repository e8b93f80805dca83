from flopkb.cli import program

program()
