/*
 * roles.c - the role rule (see roles.h).
 */
#include "roles.h"

#include <string.h>

bool rol_is_admin(const char *rol)
{
    return rol && !strcmp(rol, ROL_ADMIN);
}

bool rol_is_staff(const char *rol)
{
    return rol_is_admin(rol) || (rol && !strcmp(rol, ROL_BARBERO));
}

bool rol_is_known(const char *rol)
{
    return rol_is_staff(rol) || (rol && !strcmp(rol, ROL_CLIENTE));
}

bool principal_is_admin(const struct principal *p)
{
    return p->has_perfil && rol_is_admin(p->perfil.rol);
}

bool principal_is_staff(const struct principal *p)
{
    return p->has_perfil && rol_is_staff(p->perfil.rol);
}
