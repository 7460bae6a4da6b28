from tfmigrate.frontends.cli import main

main()
