"""A stand-in browser for $BROWSER: fetches the URL it is given and follows the redirects (to the
loopback), as a user's browser does after they consent. Prints nothing."""

import sys
import urllib.request

urllib.request.urlopen(sys.argv[1], timeout=30).read()
