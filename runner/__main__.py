if __name__ == "__main__":  # spawned workers import this module too: they need none of the CLI
    from runner.cli import main

    main()
