from sitegen.cli import main

main()
