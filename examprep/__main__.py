from examprep.cli import main

main()
