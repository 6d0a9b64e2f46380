import sys

from igot.cli import main

sys.exit(main())
