/* placeholder while the adapter is written (not committed) */
#include "google.h"
br_err calendar_google_open(const struct config *cfg, struct calendar **out)
{
    (void)cfg;
    (void)out;
    return err_set(BR_CONFIG, "google calendar not built yet");
}
