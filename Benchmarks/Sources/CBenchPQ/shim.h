// libpq, for the hand-written PostgreSQL baselines the figures are compared with.
#include <libpq-fe.h>
