/* placeholder while the adapter is written (not committed) */
#include "smtp.h"
br_err mailer_smtp_open(const struct config *cfg, struct mailer **out)
{
    (void)cfg;
    (void)out;
    return err_set(BR_CONFIG, "smtp not built yet");
}
