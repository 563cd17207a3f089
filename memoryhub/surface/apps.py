from django.apps import AppConfig


class SurfaceConfig(AppConfig):
    name = "memoryhub.surface"
    label = "surface"
    verbose_name = "MemoryHub agent surface"
